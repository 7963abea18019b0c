"""Escape suite, qk itself (issue 38): a task cannot take the remote cache token from qk's process, and
no git that qk runs can execute what a task wrote into git's configuration."""
