"""Tools the model can call: the registry and the tools themselves."""
