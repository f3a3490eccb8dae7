// Records of room surface (issue 30): claim tokens of demo judges and a judge's synthetic test data.

/** A claim token as stored: only its hash (the token itself is shown once, to the demo caller). */
export interface ClaimTokenRecord {
  token_hash: string;
  judge_id: string;
  /** The demo organization the judge was made in. */
  org_id: string;
  created_at: string;
  expires_at: string;
  used_at: string | null;
  used_by_org_id: string | null;
}

export interface SyntheticSample {
  quality: 'high' | 'low';
  request: string;
  response: string;
  contexts?: string[];
  expected_output?: string;
  /** For a low sample: the evaluator it fails and how (null for a high one). */
  fails_evaluator?: string | null;
  failure?: string | null;
}

/** One per judge: the latest generation asked for. */
export interface SyntheticDataRecord {
  judge_id: string;
  org_id: string;
  /** The key that asked (the generation runs as its caller, also after a restart). */
  key_id: string;
  status: 'pending' | 'ready' | 'failed';
  count: number;
  name: string;
  description: string;
  samples: SyntheticSample[];
  error: string | null;
  created_at: string;
  updated_at: string;
}
