--- The `app.locks` module of README.md's nginx example: the worker's client,
-- here the three masters of the suite (tests/nginx/hrltest.lua).
return require("hrltest").client("c3")
