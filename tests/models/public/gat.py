"""A graph attention network (Velickovic et al., 2018) on a small random graph.

The paper's layer, with a dense adjacency matrix as tutorials write it: project the node
features, Wh = h W; score every pair e_ij = LeakyReLU(a^T [Wh_i || Wh_j]) (computed as
Wh a_1 + (Wh a_2)^T); keep only edges with masked_fill(adj == 0, -inf); softmax over
neighbours; dropout on the attention; h'_i = sum_j alpha_ij Wh_j, ELU. Two layers: several
heads concatenated, then one averaging output head; node classification with cross_entropy on
the training nodes, Adam with weight decay, as in the paper's Cora setup.
"""

import minitorch as torch
import minitorch.nn as nn
import minitorch.nn.functional as F


class GraphAttentionLayer(nn.Module):
    def __init__(self, in_features, out_features, dropout, alpha, concat=True):
        super().__init__()
        self.dropout = dropout
        self.concat = concat
        self.W = nn.Parameter(torch.empty(in_features, out_features))
        nn.init.xavier_uniform_(self.W.data, gain=1.414)
        self.a = nn.Parameter(torch.empty(2 * out_features, 1))
        nn.init.xavier_uniform_(self.a.data, gain=1.414)
        self.leakyrelu = nn.LeakyReLU(alpha)
        self.out_features = out_features

    def forward(self, h, adj):
        Wh = torch.mm(h, self.W)  # (N, out_features)
        e = self._prepare_attentional_mechanism_input(Wh)  # (N, N)
        attention = e.masked_fill(adj == 0, float("-inf"))
        attention = F.softmax(attention, dim=1)
        attention = F.dropout(attention, self.dropout, training=self.training)
        h_prime = torch.matmul(attention, Wh)
        return F.elu(h_prime) if self.concat else h_prime

    def _prepare_attentional_mechanism_input(self, Wh):
        Wh1 = torch.matmul(Wh, self.a[: self.out_features, :])  # (N, 1)
        Wh2 = torch.matmul(Wh, self.a[self.out_features :, :])  # (N, 1)
        e = Wh1 + Wh2.T  # (N, N) by broadcasting
        return self.leakyrelu(e)


class GAT(nn.Module):
    def __init__(self, nfeat, nhid, nclass, dropout, alpha, nheads):
        super().__init__()
        self.dropout = dropout
        self.attentions = nn.ModuleList(
            [
                GraphAttentionLayer(nfeat, nhid, dropout=dropout, alpha=alpha, concat=True)
                for _ in range(nheads)
            ]
        )
        self.out_att = GraphAttentionLayer(
            nhid * nheads, nclass, dropout=dropout, alpha=alpha, concat=False
        )

    def forward(self, x, adj):
        x = F.dropout(x, self.dropout, training=self.training)
        x = torch.cat([att(x, adj) for att in self.attentions], dim=1)
        x = F.dropout(x, self.dropout, training=self.training)
        x = F.elu(self.out_att(x, adj))
        return F.log_softmax(x, dim=1)


def random_graph(n_nodes=12, n_feat=6, n_class=3, p=0.3):
    """Node features, a symmetric 0/1 adjacency with self-loops, labels, and a train mask."""
    features = torch.randn(n_nodes, n_feat)
    upper = (torch.rand(n_nodes, n_nodes) < p).float().triu(1)
    adj = upper + upper.t() + torch.eye(n_nodes)
    labels = torch.randint(0, n_class, (n_nodes,))
    idx_train = torch.arange(0, n_nodes // 2)
    idx_val = torch.arange(n_nodes // 2, n_nodes)
    return features, adj, labels, idx_train, idx_val


def step(model, features, adj, labels, idx_train):
    output = model(features, adj)
    return F.nll_loss(output[idx_train], labels[idx_train])


def accuracy(output, labels):
    preds = output.max(1)[1].type_as(labels)
    correct = preds.eq(labels).double()
    return correct.sum() / len(labels)


def example():
    torch.manual_seed(0)
    features, adj, labels, idx_train, _ = random_graph()
    model = GAT(nfeat=features.shape[1], nhid=4, nclass=3, dropout=0.6, alpha=0.2, nheads=2)
    return step, (model, features, adj, labels, idx_train)


def main(epochs=5):
    torch.manual_seed(72)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    features, adj, labels, idx_train, idx_val = random_graph()
    model = GAT(
        nfeat=features.shape[1],
        nhid=4,
        nclass=int(labels.max()) + 1,
        dropout=0.6,
        alpha=0.2,
        nheads=2,
    ).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.005, weight_decay=5e-4)
    features, adj, labels = features.to(device), adj.to(device), labels.to(device)
    compiled_step = torch.compile(step)
    losses = []
    for epoch in range(epochs):
        model.train()
        optimizer.zero_grad(set_to_none=True)
        loss_train = compiled_step(model, features, adj, labels, idx_train)
        loss_train.backward()
        optimizer.step()
        model.eval()
        with torch.no_grad():
            output = model(features, adj)
            loss_val = F.nll_loss(output[idx_val], labels[idx_val])
            acc_val = accuracy(output[idx_val], labels[idx_val])
        print(
            f"Epoch: {epoch + 1:04d} loss_train: {loss_train.item():.4f} "
            f"loss_val: {loss_val.item():.4f} acc_val: {acc_val.item():.4f}"
        )
        losses += [loss_train.item(), loss_val.item()]
    return losses
