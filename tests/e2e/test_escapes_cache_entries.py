"""Escape suite, cache entries (issue 38): what a task leaves in its outputs cannot become an entry that
later restores something dangerous or too big (links that point away, setuid and setgid bits, sparse and
oversized files)."""
