"""``make bench``: throughput and memory of mcheck on the benchmark specs."""
