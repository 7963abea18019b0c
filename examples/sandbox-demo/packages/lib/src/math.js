/**
 * @param {number} a
 * @param {number} b
 * @returns {number}
 */
export function add(a, b) {
  return a + b;
}

/**
 * @param {number[]} values
 * @returns {number}
 */
export function mean(values) {
  if (values.length === 0) throw new RangeError("mean of no values");
  return values.reduce(add, 0) / values.length;
}
