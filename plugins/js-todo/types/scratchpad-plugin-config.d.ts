/** @module Interface scratchpad:plugin/config@0.1.3 **/
export function get(): string;
