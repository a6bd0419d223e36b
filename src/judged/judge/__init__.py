"""The judging web app: assessors close the holes a pool names, backed by a real database.

``judged judge init`` loads a pool, its queries and documents and a grade scale into a
campaign database (SQLite by default, PostgreSQL by URL); ``serve`` runs the page and the
JSON API; ``export`` writes TREC qrels plus a provenance sidecar; ``status`` reports progress
and inter-assessor agreement. Install with the ``web`` extra.
"""
