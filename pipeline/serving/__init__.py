"""The HTTP server: an exported program answering questions with streamed progress events."""

from pipeline.serving.app import create_app
from pipeline.serving.server import run, running_server, serve
from pipeline.serving.sse import SSEMessage, parse_sse

__all__ = ["SSEMessage", "create_app", "parse_sse", "run", "running_server", "serve"]
