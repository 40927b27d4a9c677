// Colour maps of the rigml viewer page: the same tables as rigml-viz's colormap.rs, so the
// browser and the CPU renders agree (viridis heat map, grey-to-red differences, golden-angle
// joint colours). Colours are sRGB in [0, 1]; setColour writes them linear for three.js.

export const VIRIDIS = [
  [0x44, 0x01, 0x54], [0x47, 0x2c, 0x7a], [0x3b, 0x52, 0x8b], [0x2c, 0x72, 0x8e], [0x21, 0x91, 0x8c],
  [0x28, 0xae, 0x80], [0x5e, 0xc9, 0x62], [0xad, 0xdc, 0x30], [0xfd, 0xe7, 0x25],
];
export const DIFFERENCE = [[0x8c, 0x8c, 0x8c], [0xf0, 0xd0, 0x40], [0xf0, 0x80, 0x20], [0xd0, 0x10, 0x10]];
export const DIFFERENCE_SCALE = 0.5;
export const UNSKINNED = [0.55, 0.55, 0.55];

/** Piecewise-linear lookup in an evenly spaced table of sRGB bytes; returns sRGB in [0, 1]. */
export function lookup(table, t) {
  t = Number.isFinite(t) ? Math.min(Math.max(t, 0), 1) : 0;
  const last = table.length - 1;
  const x = t * last;
  const i = Math.min(Math.floor(x), last - 1);
  const f = x - i;
  return [0, 1, 2].map((c) => (table[i][c] * (1 - f) + table[i + 1][c] * f) / 255);
}

/** A distinct colour per joint index (golden-angle hues), as rigml-viz's joint_colour. */
export function jointColour(j) {
  const h = (j * 0.618033988749895) % 1;
  const s = [0.75, 0.55, 0.9][j % 3];
  const v = [0.95, 0.8, 0.65][Math.floor(j / 3) % 3];
  const h6 = h * 6, c = v * s, x = c * (1 - Math.abs((h6 % 2) - 1)), m = v - c;
  const rgb = [[c, x, 0], [x, c, 0], [0, c, x], [0, x, c], [x, 0, c], [c, 0, x]][Math.min(Math.floor(h6), 5)];
  return rgb.map((k) => k + m);
}

export function toLinear(c) {
  return c <= 0.04045 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4);
}

export function setColour(array, v, srgb) {
  array[3 * v] = toLinear(srgb[0]);
  array[3 * v + 1] = toLinear(srgb[1]);
  array[3 * v + 2] = toLinear(srgb[2]);
}
