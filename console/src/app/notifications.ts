// The bell's notifications: the latest few, and marking them read or dismissed.
import { api } from "./context.ts";

export function loadNotifications() {
  return api.call("listNotifications", { query: { size: 10 } });
}

export function readNotification(id: string) {
  return api.call("readNotification", { params: { notificationId: id } });
}

export function readAllNotifications() {
  return api.call("readAllNotifications");
}

export function dismissNotification(id: string) {
  return api.call("dismissNotification", { params: { notificationId: id } });
}
