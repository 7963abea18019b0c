export { add, clamp } from './math';
