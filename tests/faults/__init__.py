"""The fault suite: hostile files, kills, concurrency, hostile questions, updates, failing endpoints."""
