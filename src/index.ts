/**
 * hitl-nb in JupyterLab and Notebook 7: the open prompts of A2A agents (hitl-prompt/v1)
 * that this user may answer, never missed.
 *
 * A plugin per concern, each asking for what it needs by token, so Notebook 7 loads
 * what fits its shell:
 *
 * - `hitl-nb:prompts`: the model of the open prompts (`IPrompts`), kept current by the
 *   Jupyter server through its event bus (`model.ts`);
 * - `hitl-nb:panel`: the sidebar, its commands (open it, answer a prompt, show a card)
 *   and `?hitl-prompt=<prompt id>` in the page's URL (`panel.ts`, `card.ts`);
 * - `hitl-nb:status`: the status bar's "2 prompts" (JupyterLab; Notebook 7 has none);
 * - `hitl-nb:plugin`: notifications, reminders and the tab's title, with the settings of
 *   `schema/plugin.json` (`notifier.ts`).
 */
import {
  ILayoutRestorer,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { INotebookTracker } from '@jupyterlab/notebook';
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { IStatusBar } from '@jupyterlab/statusbar';
import { LabIcon } from '@jupyterlab/ui-components';
import { ReadonlyPartialJSONObject } from '@lumino/coreutils';

import { UrlParameters } from './contract';
import { PromptsModel } from './model';
import { DEFAULT_SETTINGS, INotifierSettings, Notifier } from './notifier';
import { PromptsPanel } from './panel';
import { CardPlaces } from './places';
import { PromptsStatus } from './status';
import { CommandIDs, IPrompts } from './tokens';

import promptsSvg from '../style/icons/prompts.svg';

/** The plugin whose settings the Settings Editor shows (`schema/plugin.json`). */
const SETTINGS_ID = 'hitl-nb:plugin';
/**
 * The URL's parameters that open one prompt: `lab?hitl-prompt=<prompt id>`, and
 * optionally `&hitl-registration=<the gateway's id of its task>` (a prompt id is unique
 * at its agent only; the links of hitl-nb's email and webhook messages carry both).
 */
export const URL_PARAMETER = UrlParameters.prompt;
export const URL_REGISTRATION = UrlParameters.registration;
/**
 * The URL's parameter that opens the panel itself (`lab?hitl-inbox=1`): the link of a
 * digest message, which tells of several prompts.
 */
export const URL_INBOX = UrlParameters.inbox;

export const promptsIcon = new LabIcon({
  name: 'hitl-nb:prompts',
  svgstr: promptsSvg
});

const promptsPlugin: JupyterFrontEndPlugin<IPrompts> = {
  id: 'hitl-nb:prompts',
  description:
    'The open prompts this user may answer, kept current by the Jupyter server.',
  autoStart: true,
  provides: IPrompts,
  activate: (app: JupyterFrontEnd): IPrompts => {
    const model = new PromptsModel({
      serverSettings: app.serviceManager.serverSettings,
      events: app.serviceManager.events.stream
    });
    void model.refresh();
    return model;
  }
};

function keyOf(args: ReadonlyPartialJSONObject): string {
  return typeof args['key'] === 'string' ? args['key'] : '';
}

const panelPlugin: JupyterFrontEndPlugin<void> = {
  id: 'hitl-nb:panel',
  description:
    'The prompts panel: open prompts, answered with the notebook’s own card.',
  autoStart: true,
  requires: [IPrompts, IRenderMimeRegistry],
  optional: [
    INotebookTracker,
    ILayoutRestorer,
    ISettingRegistry,
    ICommandPalette
  ],
  activate: (
    app: JupyterFrontEnd,
    model: IPrompts,
    rendermime: IRenderMimeRegistry,
    tracker: INotebookTracker | null,
    restorer: ILayoutRestorer | null,
    registry: ISettingRegistry | null,
    palette: ICommandPalette | null
  ): void => {
    const query = new URLSearchParams(window.location.search);
    const wanted = query.get(URL_PARAMETER);
    const wantedTask = query.get(URL_REGISTRATION);
    let idleMinutes = 10;
    let answerWithKernel = false;
    if (registry) {
      void registry.load(SETTINGS_ID).then(settings => {
        const read = (): void => {
          idleMinutes = settings.get('kernelIdleMinutes').composite as number;
          answerWithKernel =
            settings.get('answerWithKernel').composite === true;
        };
        settings.changed.connect(read);
        read();
      });
    }
    const places = new CardPlaces(app, tracker);
    const panel = new PromptsPanel({
      model,
      places,
      icon: promptsIcon,
      label: app.name === 'JupyterLab' ? '' : 'Prompts',
      answerWithKernel: () => answerWithKernel,
      serverSettings: app.serviceManager.serverSettings,
      who: () => ({
        name: model.me?.display_name || model.me?.name || 'you',
        hub: model.source === 'hub'
      }),
      loadHost: async () => {
        const { CardHost } = await import('./card');
        return new CardHost({
          kernels: app.serviceManager.kernels,
          rendermime,
          serverSettings: app.serviceManager.serverSettings,
          kernelName: () => model.kernelName,
          idleMinutes: () => idleMinutes
        });
      }
    });
    app.shell.add(panel, 'right', { rank: 650 });
    restorer?.add(panel, 'hitl-nb-prompts');
    const { commands } = app;
    commands.addCommand(CommandIDs.openPanel, {
      label: 'Prompts for You',
      caption: 'Show the open prompts you may answer',
      icon: promptsIcon,
      execute: () => {
        app.shell.activateById(panel.id);
      }
    });
    palette?.addItem({ command: CommandIDs.openPanel, category: 'Prompts' });
    commands.addCommand(CommandIDs.answer, {
      label: 'Answer a Prompt',
      execute: async args => {
        app.shell.activateById(panel.id);
        await panel.answer(keyOf(args));
      }
    });
    commands.addCommand(CommandIDs.showCard, {
      label: 'Show the Card of a Prompt',
      execute: async args => {
        const item = model.get(keyOf(args));
        if (!item || !(await places.show(item))) {
          app.shell.activateById(panel.id);
          panel.reveal(keyOf(args));
        }
      }
    });
    if (!wanted && query.has(URL_INBOX)) {
      // Opened from a digest's link: the list of every prompt waiting.
      void app.restored.then(() => app.shell.activateById(panel.id));
    }
    if (wanted) {
      // Opened from a link (an email, a chat message): that prompt's card, once listed.
      const open = (): boolean => {
        const item = model.items.find(
          candidate =>
            candidate.prompt_id === wanted &&
            (!wantedTask || candidate.registration === wantedTask)
        );
        if (!item && model.status.state !== 'ok') {
          return false;
        }
        app.shell.activateById(panel.id);
        if (item?.may_answer) {
          void panel.answer(item.key);
        } else if (item) {
          panel.reveal(item.key);
        }
        return true;
      };
      void app.restored.then(() => {
        if (!open()) {
          const once = (): void => {
            if (open()) {
              model.changed.disconnect(once);
            }
          };
          model.changed.connect(once);
        }
      });
    }
  }
};

const statusPlugin: JupyterFrontEndPlugin<void> = {
  id: 'hitl-nb:status',
  description: 'The status bar’s count of the prompts waiting for this user.',
  autoStart: true,
  requires: [IPrompts],
  optional: [IStatusBar],
  activate: (
    app: JupyterFrontEnd,
    model: IPrompts,
    statusBar: IStatusBar | null
  ): void => {
    if (!statusBar) {
      return; // Notebook 7 has no status bar: the panel's badge counts them there
    }
    const item = new PromptsStatus(model, app.commands);
    statusBar.registerStatusItem('hitl-nb:status', {
      item,
      align: 'left',
      rank: 50,
      isActive: () => item.active,
      activeStateChanged: item.activeChanged
    });
  }
};

const notifierPlugin: JupyterFrontEndPlugin<void> = {
  id: SETTINGS_ID,
  description:
    'Notifications of new prompts, reminders before deadlines, the tab’s title.',
  autoStart: true,
  requires: [IPrompts],
  optional: [ISettingRegistry, INotebookTracker],
  activate: (
    app: JupyterFrontEnd,
    model: IPrompts,
    registry: ISettingRegistry | null,
    tracker: INotebookTracker | null
  ): void => {
    const notifier = new Notifier(
      model,
      app.commands,
      new CardPlaces(app, tracker)
    );
    notifier.configure(DEFAULT_SETTINGS);
    if (registry) {
      void registry
        .load(SETTINGS_ID)
        .then(settings => {
          const read = (): void => {
            notifier.configure({
              ...DEFAULT_SETTINGS,
              ...(settings.composite as unknown as Partial<INotifierSettings>)
            });
          };
          settings.changed.connect(read);
          read();
        })
        .catch(reason => {
          console.warn(
            'hitl-nb: the notification settings could not be read',
            reason
          );
        });
    }
  }
};

export default [promptsPlugin, panelPlugin, statusPlugin, notifierPlugin];
