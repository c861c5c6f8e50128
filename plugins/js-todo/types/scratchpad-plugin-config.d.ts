/** @module Interface scratchpad:plugin/config@0.1.0 **/
export function get(): string;
