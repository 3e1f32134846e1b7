"""The Python worker's parts (tests/workers/README.md has the protocol):
wire (reading commands, writing answers), cycles (the benchmark cases),
contend, workload, race and cancel (one command each)."""
