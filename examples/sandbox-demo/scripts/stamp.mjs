// Prints what a build is stamped with: the branch it was built from and the API it talks to.
// Run from a project's directory: reads the workspace's .git/HEAD and .env.
import { readFileSync } from "node:fs";

const root = new URL("../", import.meta.url);
const head = readFileSync(new URL(".git/HEAD", root), "utf8").trim();
const env = readFileSync(new URL(".env", root), "utf8");
const api = /^API_URL=(.*)$/m.exec(env)?.[1] ?? "";
console.log(JSON.stringify({ branch: head.replace(/^ref: refs\/heads\//, ""), api }));
