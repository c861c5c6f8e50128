/** @module Interface scratchpad:plugin/view@0.1.3 **/
export function describe(): Array<Section>;
export type Content = ContentText | ContentItems;
export interface ContentText {
  tag: 'text',
  val: string,
}
export interface ContentItems {
  tag: 'items',
  val: Array<string>,
}
export interface Section {
  title: string,
  key: string,
  content: Content,
  usage?: string,
}
