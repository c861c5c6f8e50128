/** @module Interface scratchpad:plugin/observation@0.1.3 **/
/**
 * # Variants
 * 
 * ## `"text"`
 * 
 * ## `"binary"`
 */
export type ContentKind = 'text' | 'binary';

export class Observation {
  /**
   * This type does not have a public constructor.
   */
  private constructor();
  size(): bigint;
  kind(): ContentKind;
  read(offset: bigint, len: number): Uint8Array;
  sizeChars(): bigint;
  sha256(): string;
  metadata(): string;
}
