"""``python -m sparqlqa``: the ``sparqlqa`` command line (an MCP client may spawn ``python -m sparqlqa mcp``)."""

__all__: list[str] = []

from sparqlqa.cli import main

if __name__ == "__main__":
    main()
