"""``python -m sparqlqa``: the same command line as ``sparqlqa`` (e.g. an MCP client spawning ``python -m sparqlqa mcp``)."""

from sparqlqa.cli import main

if __name__ == "__main__":
    main()
