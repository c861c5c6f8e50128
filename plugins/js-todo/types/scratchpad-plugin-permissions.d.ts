/** @module Interface scratchpad:plugin/permissions@0.1.3 **/
export function requested(): Array<string>;
