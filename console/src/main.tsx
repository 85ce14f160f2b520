import { render } from 'preact';
import { App } from './app';
import { captureLinkToken, PortalApp } from './portal';
import { applyTheme } from './theme';
import './style.css';

// One build, two modes: the console under /console/, the customer portal under /portal/ (docs/portal.md).
const portal = location.pathname.startsWith('/portal');
if (portal) {
  applyTheme(new URLSearchParams(location.search));
  captureLinkToken();
}
render(portal ? <PortalApp /> : <App />, document.getElementById('app')!);
