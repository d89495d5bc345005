/**
 * `deno task chart-png FILE.svg...` (development only): renders sciobench's SVG charts to PNG with
 * resvg (npm:@resvg/resvg-js) and the DejaVu fonts, so a person can look at them; FILE.png is
 * written beside each FILE.svg. tests/plot_test.ts renders every workload's chart through
 * `svgToPng`. Not imported by lib/ or main.ts: the product never loads resvg.
 * @module
 */
import { Resvg } from "npm:@resvg/resvg-js@2.6.2";

/** Where Debian's fonts-dejavu-core puts DejaVu Sans, the charts' first font. */
export const FONT_DIR = "/usr/share/fonts/truetype/dejavu";

/** A rendered chart: PNG bytes, size in pixels, and the RGBA pixels. */
export interface ChartImage {
  /** The PNG file's bytes. */
  png: Uint8Array;
  /** Width in pixels. */
  width: number;
  /** Height in pixels. */
  height: number;
  /** RGBA, 4 bytes per pixel, rows top to bottom. */
  pixels: Uint8Array;
}

/** Renders SVG text to PNG at `zoom` times its size (DejaVu Sans for every font family). */
export function svgToPng(svg: string, zoom = 1.5): ChartImage {
  let fontDirs: string[] = [];
  try {
    if (Deno.statSync(FONT_DIR).isDirectory) fontDirs = [FONT_DIR];
  } catch {
    // no DejaVu: the system's fonts below
  }
  const image = new Resvg(svg, {
    fitTo: { mode: "zoom", value: zoom },
    background: "white",
    font: { loadSystemFonts: fontDirs.length === 0, fontDirs, defaultFontFamily: "DejaVu Sans" },
  }).render();
  return {
    png: image.asPng(),
    width: image.width,
    height: image.height,
    pixels: new Uint8Array(image.pixels),
  };
}

if (import.meta.main) {
  for (const path of Deno.args) {
    if (!path.endsWith(".svg")) {
      console.error(`chart-png: ${path}: expected a .svg file`);
      Deno.exit(2);
    }
    const image = svgToPng(Deno.readTextFileSync(path));
    const out = path.replace(/\.svg$/, ".png");
    Deno.writeFileSync(out, image.png);
    console.log(`${out} ${image.width}x${image.height}`);
  }
}
