/** @module Interface scratchpad:plugin/config@0.1.2 **/
export function get(): string;
