/** @module Interface scratchpad:plugin/permissions@0.1.1 **/
export function requested(): Array<string>;
