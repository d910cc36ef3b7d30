"""Execution: plan steps run as guarded retrieval tools under the tool loop."""
