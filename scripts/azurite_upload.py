"""Uploads a folder into an Azurite blob container, for scripts/stores (`upload azure`).

Usage: azurite_upload.py ENDPOINT CONTAINER DIR PREFIX
ENDPOINT is Azurite's blob endpoint (http://127.0.0.1:PORT); the well-known development account
devstoreaccount1 and its published key sign the requests. Prints the number of blobs uploaded."""

import os
import sys

from azure.storage.blob import BlobServiceClient

# Azurite's documented development account and key (not a secret: the same in every Azurite).
ACCOUNT = "devstoreaccount1"
KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="


def main() -> None:
    endpoint, container, folder, prefix = sys.argv[1:5]
    service = BlobServiceClient(f"{endpoint.rstrip('/')}/{ACCOUNT}", credential={"account_name": ACCOUNT, "account_key": KEY})
    client = service.get_container_client(container)
    client.create_container()
    uploaded = 0
    for root, _dirs, files in os.walk(folder):
        for name in files:
            path = os.path.join(root, name)
            blob = f"{prefix}/{os.path.relpath(path, folder)}"
            with open(path, "rb") as data:
                client.upload_blob(blob, data, overwrite=True)
            uploaded += 1
    print(uploaded)


if __name__ == "__main__":
    main()
