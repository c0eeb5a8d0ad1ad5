// jsdom, with what a page has and jsdom lacks: fetch and its Request, Response and
// Headers (node's own), and DragEvent (Lumino's drag and drop extends it).
const { TestEnvironment } = require('jest-environment-jsdom');

class PageEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    for (const name of ['fetch', 'Request', 'Response', 'Headers']) {
      this.global[name] = globalThis[name];
    }
    if (this.global.DragEvent === undefined) {
      this.global.DragEvent = class DragEvent extends this.global.MouseEvent {};
    }
  }
}

module.exports = PageEnvironment;
