import { volume } from './main';

it('keeps the volume in range', () => expect(volume(12)).toBe(10));
