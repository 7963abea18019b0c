import { clamp } from 'lib';

const API_URL = process.env.API_URL ?? 'http://localhost:3000';

export function volume(requested: number): number {
  return clamp(requested, 0, 10);
}

console.log(`app talking to ${API_URL}, volume ${volume(12)}`);
