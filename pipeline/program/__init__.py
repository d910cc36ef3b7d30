"""The DSPy program: the module that wires the stages, its trace, its progress events and its LM."""
