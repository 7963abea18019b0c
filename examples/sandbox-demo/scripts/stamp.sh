#!/bin/sh
# Prints what a build is stamped with: the branch it was built from and the API it talks to.
# Run from a project's directory; reads the workspace's .git/HEAD and .env.
root=../..
branch=$(sed 's|^ref: refs/heads/||' "$root/.git/HEAD")
api=$(sed -n 's/^API_URL=//p' "$root/.env")
echo "branch=$branch api=$api"
