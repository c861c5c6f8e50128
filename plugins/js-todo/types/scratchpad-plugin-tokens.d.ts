/** @module Interface scratchpad:plugin/tokens@0.1.3 **/
export function count(text: string): number;
export function encoding(): string;
