/** @module Interface scratchpad:plugin/tokens@0.1.1 **/
export function count(text: string): number;
export function encoding(): string;
