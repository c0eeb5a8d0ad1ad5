/**
 * The status bar's item: "2 prompts" waiting for this user (a click opens the panel);
 * "Prompts unavailable" while they cannot be read; nothing when none wait.
 */
import { CommandRegistry } from '@lumino/commands';
import { Signal } from '@lumino/signaling';
import { Widget } from '@lumino/widgets';

import { CommandIDs, IPrompts } from './tokens';
import { prompts } from './words';

export class PromptsStatus extends Widget {
  constructor(
    private _model: IPrompts,
    commands: CommandRegistry
  ) {
    super({ node: document.createElement('button') });
    this.addClass('hitl-lab-status');
    this.addClass('jp-StatusBar-TextItem');
    (this.node as HTMLButtonElement).type = 'button';
    this.node.addEventListener('click', () => {
      void commands.execute(CommandIDs.openPanel);
    });
    _model.changed.connect(this._update, this);
    this._update();
  }

  /** Whether the item is worth showing now. */
  get active(): boolean {
    return this._active;
  }

  private _update(): void {
    const model = this._model;
    const mine = model.items.filter(item => model.isForMe(item)).length;
    const unavailable = model.status.state === 'unavailable';
    this._active = mine > 0 || unavailable;
    this.node.textContent = unavailable ? 'Prompts unavailable' : prompts(mine);
    this.node.title = unavailable
      ? model.status.message
      : `${prompts(mine)} for you: open the prompts panel`;
    this.node.dataset.state = unavailable ? 'unavailable' : 'ok';
    this.activeChanged.emit();
  }

  /** Emitted when `active` may have changed (the status bar asks it again). */
  readonly activeChanged = new Signal<this, void>(this);

  private _active = false;
}
