/** @module Interface scratchpad:plugin/permissions@0.1.2 **/
export function requested(): Array<string>;
