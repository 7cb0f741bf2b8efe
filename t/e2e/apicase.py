"""Request helpers shared by the write API's test classes: a unittest.TestCase whose class has
`stack` and `token` (set in setUpClass).

    class Links(ApiCase):
        def test_link(self):
            self.ok("PUT", "/v2/collections/%s/notes/%s" % (c, n))
            self.error(self.call("GET", "/v2/collections/x"), 400, "INVALID_PARAMETER", "collection_id")
"""
import unittest

from listdata import REQ_ID


class ApiCase(unittest.TestCase):
    def call(self, method, path, body=None, token=None, query=None, headers=None):
        """The response of one request with the class's token (or `token`)."""
        return self.stack.request(method, path, body=body, token=token or self.token, query=query,
                                  headers=headers)

    def ok(self, method, path, body=None, **kw):
        """The JSON body of a request that must answer 200 with a request id."""
        r = self.call(method, path, body, **kw)
        self.assertEqual(r.status, 200, r.text)
        self.assertRegex(r.json()["request_id"], REQ_ID)
        return r.json()

    def error(self, r, status, kind, field=None):
        """r is the error of the contract's section 6 with this status, kind and field_name."""
        self.assertEqual(r.status, status, r.text)
        meta = r.json()["error_metadata"]
        self.assertEqual((meta["error_kind"], meta.get("field_name")), (kind, field), r.text)
