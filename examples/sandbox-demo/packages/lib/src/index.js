export { add, mean } from "./math.js";
