"""STaRK semi-structured knowledge bases (placeholder: being written)."""
