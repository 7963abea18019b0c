import { mean } from "lib";

/**
 * A one-line report of response times.
 * @param {number[]} millis
 * @returns {string}
 */
export function report(millis) {
  return `${millis.length} requests, mean ${mean(millis).toFixed(1)} ms`;
}
