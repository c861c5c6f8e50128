/** @module Interface scratchpad:plugin/config@0.1.1 **/
export function get(): string;
