"""Exploration over several processes (--workers) or a dask cluster (--cluster)."""
