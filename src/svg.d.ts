// SVG files are bundled as their text (the builder's asset rule).
declare module '*.svg' {
  const value: string;
  export default value;
}
