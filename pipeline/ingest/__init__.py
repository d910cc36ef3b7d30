"""Reading source files into pages, chunking them and building an index generation."""
