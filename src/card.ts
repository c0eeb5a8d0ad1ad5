/**
 * The answer card, drawn by a kernel of the panel's own: the same ipywidgets card as in
 * a notebook (`hitl_nb.notebook.prompt_card`), so its form, checks, 422 on the fields,
 * 409 words and consensus count are the notebook's, and the answer goes through the
 * gateway as the user the server vouches for.
 *
 * One kernel per page, started when the first card is asked for, reused for every card
 * after, and shut down after `idleMinutes` without a card asked for (and when the page
 * goes away). Its widgets are drawn with JupyterLab's own widget manager for a kernel
 * (`KernelWidgetManager`, shared with the page's `@jupyter-widgets/jupyterlab-manager`),
 * registered with the core widgets only: the card uses no other.
 *
 * This module is loaded when the first card is asked for, not with the page.
 */
import * as base from '@jupyter-widgets/base';
import {
  KernelWidgetManager,
  WidgetRenderer,
  output
} from '@jupyter-widgets/jupyterlab-manager';
import { URLExt } from '@jupyterlab/coreutils';
import { OutputAreaModel, SimplifiedOutputArea } from '@jupyterlab/outputarea';
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import { Kernel, ServerConnection } from '@jupyterlab/services';
import { Panel } from '@lumino/widgets';

import { IPromptItem } from './tokens';

const WIDGET_VIEW_MIMETYPE = 'application/vnd.jupyter.widget-view+json';

/** Python: the card of one prompt, shown; what went wrong, in words, otherwise. */
function cardCode(item: IPromptItem): string {
  const registration = JSON.stringify(item.registration);
  const prompt = JSON.stringify(item.prompt_id);
  return [
    'try:',
    '    from hitl_nb.notebook import prompt_card as _hitl_nb_prompt_card',
    `    _hitl_nb_card = _hitl_nb_prompt_card(${registration}, ${prompt})`,
    'except Exception as _hitl_nb_error:',
    '    print(f"This prompt\'s card cannot be drawn: {_hitl_nb_error}")',
    'else:',
    '    display(_hitl_nb_card)'
  ].join('\n');
}

export class CardHost {
  constructor(options: CardHost.IOptions) {
    this._options = options;
    this.widget = new Panel();
    this.widget.addClass('hitl-lab-card');
    window.addEventListener('pagehide', this._onPageHide);
  }

  /** Where the card is drawn. */
  readonly widget: Panel;

  /** The kernel drawing the cards, while one runs. */
  get kernel(): Kernel.IKernelConnection | null {
    return this._kernel;
  }

  /** Draw ``item``'s card; resolves once the kernel has sent it. */
  async show(item: IPromptItem): Promise<void> {
    this._idle();
    const kernel = await this._ensureKernel();
    const area = this._area;
    if (!area) {
      throw new Error('the answer cards kernel stopped');
    }
    area.model.clear();
    const future = kernel.requestExecute({
      code: cardCode(item),
      silent: false,
      store_history: false,
      stop_on_error: true
    });
    area.future = future;
    await future.done;
    this._idle();
  }

  /** Shut the kernel down (the next card starts another). */
  async shutdown(): Promise<void> {
    window.clearTimeout(this._timer);
    const kernel = this._kernel;
    this._forget();
    if (kernel && !kernel.isDisposed) {
      try {
        await kernel.shutdown();
      } catch (reason) {
        console.warn(
          'hitl-nb: the answer cards kernel did not shut down',
          reason
        );
      }
      kernel.dispose();
    }
  }

  dispose(): void {
    window.removeEventListener('pagehide', this._onPageHide);
    void this.shutdown();
    this.widget.dispose();
  }

  private async _ensureKernel(): Promise<Kernel.IKernelConnection> {
    if (
      this._kernel &&
      !this._kernel.isDisposed &&
      this._kernel.status !== 'dead'
    ) {
      return this._kernel;
    }
    if (!this._starting) {
      this._starting = this._start().finally(() => {
        this._starting = null;
      });
    }
    return this._starting;
  }

  private async _start(): Promise<Kernel.IKernelConnection> {
    this._forget();
    const kernel = await this._options.kernels.startNew({
      name: this._options.kernelName()
    });
    const rendermime = this._options.rendermime.clone();
    const manager = new KernelWidgetManager(kernel, rendermime);
    manager.register({
      name: '@jupyter-widgets/base',
      version: base.JUPYTER_WIDGETS_VERSION,
      exports: {
        WidgetModel: base.WidgetModel,
        WidgetView: base.WidgetView,
        DOMWidgetView: base.DOMWidgetView,
        DOMWidgetModel: base.DOMWidgetModel,
        LayoutModel: base.LayoutModel,
        LayoutView: base.LayoutView,
        StyleModel: base.StyleModel,
        StyleView: base.StyleView,
        ErrorWidgetView: base.ErrorWidgetView
      }
    });
    const controls = await import('@jupyter-widgets/controls');
    manager.register({
      name: '@jupyter-widgets/controls',
      version: controls.JUPYTER_CONTROLS_VERSION,
      exports: controls as unknown as base.ExportMap
    });
    manager.register({
      name: '@jupyter-widgets/output',
      version: output.OUTPUT_WIDGET_VERSION,
      exports: {
        OutputModel: output.OutputModel,
        OutputView: output.OutputView
      }
    });
    rendermime.removeMimeType(WIDGET_VIEW_MIMETYPE);
    rendermime.addFactory(
      {
        safe: false,
        mimeTypes: [WIDGET_VIEW_MIMETYPE],
        createRenderer: options => new WidgetRenderer(options, manager)
      },
      -10
    );
    const area = new SimplifiedOutputArea({
      model: new OutputAreaModel({ trusted: true }),
      rendermime
    });
    this.widget.addWidget(area);
    this._area = area;
    kernel.statusChanged.connect((_, status) => {
      if (status === 'dead') {
        this._forget();
      }
    });
    this._kernel = kernel;
    this._manager = manager;
    return kernel;
  }

  private _forget(): void {
    this._area?.dispose();
    this._area = null;
    this._manager?.dispose();
    this._manager = null;
    this._kernel = null;
  }

  /** (Re)start the countdown to shutting the kernel down. */
  private _idle(): void {
    window.clearTimeout(this._timer);
    const minutes = this._options.idleMinutes();
    this._timer = window.setTimeout(
      () => void this.shutdown(),
      Math.max(1, minutes) * 60_000
    );
  }

  /** The page goes away: its kernel goes too (a request that outlives the page). */
  private _onPageHide = (): void => {
    const kernel = this._kernel;
    if (!kernel) {
      return;
    }
    const settings = this._options.serverSettings;
    const url = URLExt.join(
      settings.baseUrl,
      'api/kernels',
      encodeURIComponent(kernel.id)
    );
    void ServerConnection.makeRequest(
      url,
      { method: 'DELETE', keepalive: true },
      settings
    ).catch(() => undefined);
  };

  private _options: CardHost.IOptions;
  private _kernel: Kernel.IKernelConnection | null = null;
  private _manager: KernelWidgetManager | null = null;
  private _area: SimplifiedOutputArea | null = null;
  private _starting: Promise<Kernel.IKernelConnection> | null = null;
  private _timer = 0;
}

export namespace CardHost {
  export interface IOptions {
    kernels: Kernel.IManager;
    rendermime: IRenderMimeRegistry;
    serverSettings: ServerConnection.ISettings;
    /** The kernel to start (the server names its own). */
    kernelName: () => string;
    /** Minutes without a card asked for before the kernel is shut down. */
    idleMinutes: () => number;
  }
}
