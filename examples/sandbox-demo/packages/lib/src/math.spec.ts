import { add, clamp } from './math';

it('adds', () => expect(add(2, 3)).toBe(5));
it('clamps', () => expect(clamp(12, 0, 10)).toBe(10));
