// Backups (docs/api.md "Backups and storage"): thin handlers over src/domain/backups.
import { createBackup, deleteBackupRoute, getBackupRoute, getUsage, listBackupsRoute } from './backups.ts';
import { backupUrlRoute, downloadBackup, signedDownloadRoute } from './downloads.ts';
import { drillRoute, getOperationRoute, previewRestoreRoute, restoreBackup } from './restores.ts';
import { getBackupSettings, putBackupSettings } from './settings.ts';

// The download route comes before the plain get so `…:download` is not read as an id.
export const backupRoutes = [
  createBackup,
  drillRoute,
  listBackupsRoute,
  downloadBackup,
  // Before getBackupRoute: its {backup_id} would also match `backup_…:signedDownload`.
  signedDownloadRoute,
  backupUrlRoute,
  getBackupRoute,
  deleteBackupRoute,
  restoreBackup,
  previewRestoreRoute,
  getOperationRoute,
  getUsage,
  getBackupSettings,
  putBackupSettings,
];
