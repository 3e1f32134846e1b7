# Empty dependencies file for interop_agent.
# This may be replaced when dependencies are built.
