"""``python -m sparqlqa``: the ``sparqlqa`` command line (an MCP client may spawn ``python -m sparqlqa mcp``)."""

from sparqlqa.cli import main

__all__: list[str] = []

if __name__ == "__main__":
    main()
