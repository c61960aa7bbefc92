export interface ConnectTokenRow {
  token_hash: Buffer;
  session_id: string;
  cr_name: string;
  cluster_id: string;
  user_id: string;
  link: string;
  created_at: Date;
  expires_at: Date;
  redeemed_at: Date | null;
}

export interface NewConnectToken {
  tokenHash: Buffer;
  sessionId: string;
  crName: string;
  clusterId: string;
  userId: string;
  link: string;
  createdAt: Date;
  expiresAt: Date;
}
