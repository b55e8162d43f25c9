import { defineConfig } from 'vite';

// One self-contained file (scripts, styles, libraries) that the Go binary
// embeds and serves as /widget.js. The output must be the same bytes on
// every machine: no timestamps, no absolute paths, no source maps.
export default defineConfig({
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  define: { 'process.env.NODE_ENV': JSON.stringify('production') },
  build: {
    outDir: '../../internal/widget/dist',
    emptyOutDir: true,
    target: 'es2020',
    sourcemap: false,
    reportCompressedSize: false,
    lib: {
      entry: 'src/main.ts',
      formats: ['iife'],
      name: 'docsmithWidget',
      fileName: () => 'widget.js',
    },
  },
});
