"""The floor for scenario 1: argparse + http.client doing the same GET, nothing else."""

import argparse
import http.client
import json
import os
from urllib.parse import urlsplit

parser = argparse.ArgumentParser()
parser.add_argument("strategy_id")
parser.add_argument("--api-url", required=True)
args = parser.parse_args()
url = urlsplit(args.api_url)
connection = http.client.HTTPConnection(url.hostname, url.port)
connection.request("GET", f"/strategy-info/{args.strategy_id}", headers={"x-api-key": os.environ["YIELD_API_KEY"]})
print(json.dumps(json.loads(connection.getresponse().read())))
