/** `text` with every regular-expression metacharacter escaped: `new RegExp(escapeRegExp(s))` matches `s` literally. */
export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
