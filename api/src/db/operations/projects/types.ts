export interface ProjectRow {
  id: string;
  organization_id: string;
  name: string;
  created_at: Date;
  updated_at: Date;
}

/** Which projects a non-super caller may see: all of the organizations it administers, and its own. */
export interface ProjectVisibility {
  organizationIds: string[];
  projectIds: string[];
}
